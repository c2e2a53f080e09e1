"""The git hook shims, shipped in the wheel as gitimprove.githooks (see pyproject.toml)."""
