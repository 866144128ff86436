"""What the test tiers share: fixtures' builders, recorders and corpora."""
