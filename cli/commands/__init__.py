"""The command line, one module per stage; `shiftbench.cli` holds the group and the error
policy and adds these commands to it."""
