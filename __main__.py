"""`python -m shiftbench` runs the command line."""

from shiftbench.cli import main

main()
