"""The benchmark programs: one module per program, each defining `PROGRAM` (bench/program.py)."""
