"""Semantic metrics: BERTScore."""
