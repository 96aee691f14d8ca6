"""Exit codes and the interrupted line every command shares (no engine import)."""
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C
INTERRUPTED = "gpu-tco: interrupted"
