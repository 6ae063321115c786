"""What the analyses read of a prompt before any weights: tokens and words, chat segments, the typed
arguments (which layers, heads, query), the metric's answer tokens, and the checks that run before a load.

Pure Python over the tokenizer; nothing here runs a model or prints.
"""
