"""The memory side: signals, sessions, transcript mining, redaction, MEMORY.md, reflect."""
