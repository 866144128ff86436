"""Hosting modes: each knows its resources, how to create, describe and delete them."""
