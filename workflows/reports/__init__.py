"""Results and reports: the versioned result JSON, Markdown with PNG plots, comparisons with
regression verdicts, and cost from the dated price table.

Above the core domain and below the sweeps: it imports benchmark figures, hosting, remediation records
and the state machines' step table; WriteReport, the sweeps, the endpoint benchmark and the CLI import it.
"""
