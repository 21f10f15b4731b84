"""The domain: records, enums, policy and the pure rules of admission.

Nothing in this package imports an adapter, a database driver or the network.
"""
