"""The control plane infrastructure tools read: throughput settings, backups flags, policies, ARNs."""
