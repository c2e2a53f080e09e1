"""One module per subcommand; each parses options and calls one core function (STYLE.md §2)."""
