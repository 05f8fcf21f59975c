"""Command line: thin typer commands that parse options, call the library and print."""
