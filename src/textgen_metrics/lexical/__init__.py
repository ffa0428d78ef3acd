"""Lexical metrics, one module per metric, each defining its :class:`~textgen_metrics.metric.Metric`
(the registry finds them here): ROUGE, BLEU, Google BLEU, chrF, TER, METEOR."""
