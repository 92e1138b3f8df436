"""``python -m clinseek``: the command line, as the ``clinseek`` script (what a subprocess of clinseek runs)."""

from .cli import main

main()
