"""The spec runner: a spec file read and checked (`spec`), and run stage by stage (`pipeline`)."""
