"""Files that choose the toolchain or the environment a command runs with, unnamed.

A metric command `python3 bench.py` is run by whichever interpreter pyenv's shim picks from
`.python-version`; `cargo` by the toolchain `rust-toolchain.toml` names; `node` by nvm's
`.nvmrc` or asdf's and mise's `.tool-versions`; direnv and many benchmarks load `.envrc` or
`.env` into the environment. Changing one of them alone changes what is measured without
changing a line of the code, so they are sealed like the files an interpreter loads
(loop/implicit.py): a change to one is out of scope unless a `[scope] mutable` pattern names
it, and a metric or guard run that writes one is tampering.
"""

from __future__ import annotations

# exact file names, in any folder (version managers look in the working folder and up)
SELECTORS = frozenset(
    {
        ".tool-versions",  # asdf, mise
        "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".rtx.toml",
        "rust-toolchain", "rust-toolchain.toml",  # rustup
        ".nvmrc",  # nvm
        ".sdkmanrc",  # SDKMAN!
        ".bazelversion",  # bazelisk
        ".pdm-python",  # PDM's interpreter
        "pyvenv.cfg",  # a virtual environment's interpreter (uv run, poetry run use .venv)
        "uv.toml", "poetry.toml",  # where uv and poetry find their interpreter
        "go.work", "go.work.sum",  # the Go modules a build uses, its toolchain, their sums
        ".envrc",  # direnv
        ".env",  # dotenv files a benchmark or a runner loads
    }
)  # fmt: skip
# folders whose config a version manager reads: mise's `.config/mise.toml`, `.mise/config.toml`
_FOLDER_CONFIGS = (".config/mise.toml", ".config/mise/config.toml", ".mise/config.toml")


def why_selector(path: str) -> tuple[str, str] | None:
    """(why, the name a mutable pattern must spell) when `path` selects a toolchain or an
    environment: the names above, any `.<tool>-version` file (`.python-version`,
    `.node-version`, `.ruby-version`, `.java-version`, `.go-version`, …) and `.env.<name>`."""
    name = path.rpartition("/")[2]
    if (
        name in SELECTORS
        or (name.startswith(".") and name.endswith("-version") and len(name) > 9)
        or path.endswith(_FOLDER_CONFIGS)
    ):
        return f"{name} chooses the toolchain or environment commands run with", name
    if name.startswith(".env."):
        return f"{name} is an environment file a benchmark or runner may load", ".env"
    return None
