"""Results and reports: the versioned result JSON, Markdown with PNG plots, comparisons with
regression verdicts, and cost from the dated price table."""
