"""The command line's commands, one module each; ``gpu_tco.cli`` parses and dispatches."""
