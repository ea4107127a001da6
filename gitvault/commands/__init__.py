"""The typer commands: parse options, call the plain modules, print. Only this package and
gitvault.cli import typer or rich."""
