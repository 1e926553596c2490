"""What the command line prints: plain-data views and text rendering of plans, models, comparisons and packages."""
