"""Subcommands of the ``handreader`` command line, one module each."""
