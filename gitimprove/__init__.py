"""gitimprove: a git-native self-improvement engine for codebases worked on by coding agents."""

__version__ = "0.1.0"
