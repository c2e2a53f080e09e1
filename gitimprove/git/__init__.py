"""The only package that imports pygit2 (STYLE.md §8)."""
