"""Run the packager from a checkout: `python cli.py COMMAND ...` (same as the `tflpack` command)."""

from packager.cli import main

if __name__ == "__main__":
    main()
