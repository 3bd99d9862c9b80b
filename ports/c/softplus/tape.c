/* Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
 * {val, grad} and ops {kind, input ids, output id}, addressed by index. Each op
 * computes its result once when pushed; backward walks the ops in reverse. */

/* SUM, PROD, SOFTPLUS: softplus/nodes.c's kinds (one enum in the one translation unit). */

#define MAX_VARS 6 /* x, y, s, p, exp(-|p|), f */
#define MAX_OPS 3  /* SUM, PROD, SOFTPLUS */

typedef struct {
    double val;
    double grad;
} Var;

typedef struct {
    int kind;
    int a; /* input ids; SOFTPLUS's b is the var that saves exp(-|a|) */
    int b;
    int out; /* output id */
} Op;

typedef struct {
    Var vars[MAX_VARS];
    Op ops[MAX_OPS];
    int n_vars;
    int n_ops;
} Tape;

static inline void tape_reset(Tape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
}

static inline double tape_val(const Tape *t, int i)
{
    return t->vars[i].val;
}

static inline double tape_grad(const Tape *t, int i)
{
    return t->vars[i].grad;
}

static inline void tape_add_grad(Tape *t, int i, double g)
{
    t->vars[i].grad += g;
}

/* A new input var; returns its id. */
static inline int tape_leaf(Tape *t, double val)
{
    t->vars[t->n_vars] = (Var){val, 0.0};
    return t->n_vars++;
}

/* Record op `kind` on inputs a, b with result `val`; returns the result's id. */
static inline int tape_push(Tape *t, int kind, int a, int b, double val)
{
    int out = tape_leaf(t, val);
    t->ops[t->n_ops++] = (Op){kind, a, b, out};
    return out;
}

static inline int tape_push_sum(Tape *t, int a, int b)
{
    return tape_push(t, SUM, a, b, tape_val(t, a) + tape_val(t, b));
}

static inline int tape_push_prod(Tape *t, int a, int b)
{
    return tape_push(t, PROD, a, b, tape_val(t, a) * tape_val(t, b));
}

static inline int tape_push_softplus(Tape *t, int a)
{
    /* exp(-|p|) is saved in a var of its own, so that backward reuses it (each result
     * computed once); the op names it as its second input. */
    double p = tape_val(t, a);
    int e = tape_leaf(t, exp_neg_abs(p));
    return tape_push(t, SOFTPLUS, a, e, softplus_e(p, tape_val(t, e)));
}

/* Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule. */
static inline void tape_backward(Tape *t, int out)
{
    for (int i = 0; i < t->n_vars; i++)
        t->vars[i].grad = 0.0;
    tape_add_grad(t, out, 1.0);
    for (int k = t->n_ops - 1; k >= 0; k--) {
        Op op = t->ops[k];
        double g = tape_grad(t, op.out);
        switch (op.kind) {
        case SUM:
            tape_add_grad(t, op.a, g);
            tape_add_grad(t, op.b, g);
            break;
        case PROD:
            tape_add_grad(t, op.a, tape_val(t, op.b) * g);
            tape_add_grad(t, op.b, tape_val(t, op.a) * g);
            break;
        default: /* SOFTPLUS */
            tape_add_grad(t, op.a, sigmoid_e(tape_val(t, op.a), tape_val(t, op.b)) * g);
            break;
        }
    }
}

/* One forward pass of f(x, y) = softplus((x + y) * x); returns the id of f and sets
 * those of x and y. */
static inline int record(Tape *tape, double xv, double yv, int *x, int *y)
{
    tape_reset(tape);
    *x = tape_leaf(tape, xv);
    *y = tape_leaf(tape, yv);
    int s = tape_push_sum(tape, *x, *y);
    int p = tape_push_prod(tape, s, *x);
    return tape_push_softplus(tape, p);
}

static Sums run_v2(uint64_t seed, int64_t n)
{
    Tape tape;
    double sum_f = 0.0, sum_dx = 0.0, sum_dy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double xv, yv;
        int x, y;
        sample(seed, i, &xv, &yv);
        int f = record(&tape, xv, yv, &x, &y);
        tape_backward(&tape, f);
        sum_f += tape_val(&tape, f);
        sum_dx += tape_grad(&tape, x);
        sum_dy += tape_grad(&tape, y);
    }
    return (Sums){sum_f, sum_dx, sum_dy};
}

/* f, df/dx, df/dy at one point, through the v2 tape (for --eval). */
static void eval_point(double xv, double yv, double *f, double *dfdx, double *dfdy)
{
    Tape tape;
    int x, y;
    int out = record(&tape, xv, yv, &x, &y);
    tape_backward(&tape, out);
    *f = tape_val(&tape, out);
    *dfdx = tape_grad(&tape, x);
    *dfdy = tape_grad(&tape, y);
}
