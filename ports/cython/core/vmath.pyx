# The build's target and vector width (core/vmath.pxd), for --version.


def target_text():
    """One line naming the build target and the vector width, as --version prints it."""
    return f"target {TARGET.decode()}, vector width {WIDTH} doubles: {VECTOR_NAME.decode()}"
