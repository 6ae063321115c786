"""The causal commands: one clean run kept layer by layer (``stack``), and the interventions on it
(``ablate``, ``knockout``, ``patch``). Nothing here tokenizes prompts, loads models or prints.
"""
