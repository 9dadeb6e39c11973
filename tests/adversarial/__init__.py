"""The adversarial corpus (issue #14): bad inputs across the API, the codec, the stores
and the CLI, each with its exact outcome (a typed error, or a valid result).

Test ids start with ``typed-`` or ``valid-``; ``docs/errors.md`` gives the counts and the
command that produces them.
"""
