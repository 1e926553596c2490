"""Run the packager from a checkout: `python cli.py COMMAND ...` (same as the `tflpack` command)."""

if __name__ == "__main__":
    from packager.entry import main
    main()
