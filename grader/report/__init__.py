"""Report formats: Gradescope results.json and the terminal summary."""
