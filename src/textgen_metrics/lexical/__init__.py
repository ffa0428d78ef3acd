"""Lexical metrics: ROUGE, BLEU, Google BLEU, METEOR."""
