"""The toolkit's shared plumbing, below every stage: errors, parameter validation, the on-disk
cache, progress reporting, stage profiles, memory estimates and the registry of named choices.

Private: users meet these through the stages (the error classes are exported by
:mod:`kcca_desc` itself).
"""
