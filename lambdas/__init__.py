"""Thin Lambda handlers: parse the event into one typed request, call one function of workflows/."""
