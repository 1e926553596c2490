"""Commands that live in their own modules, each registered on the command line's app by one call."""
