"""The starts of the replication messages (ingest/log_messages.py), to tell a line cut inside one: a line that
begins like a replication message but does not match it in full is a reject (``truncated …``), not silently no
event (docs/logs.md, "Hostile input")."""

from __future__ import annotations

# A line that begins like a replication message but does not match it in full.
TRUNCATED_STARTS = [
    ("isr_shrink", r"^Shrinking ISR"), ("isr_expand", r"^Expanding ISR"), ("isr_updated", r"^ISR updated"),
    ("isr_update_failed", r"^Cached zkVersion"),
    ("leader_start", r"^Leader \S+ (?:with topic id \S+ )?starts at leader epoch|^\S+ starts at leader epoch|"
                     r"starts at Leader Epoch"),
    ("follower_start", r"^Follower \S+ starts at leader epoch"),
    ("fetcher_added", r"^Added fetcher"), ("fetcher_removed", r"^Removed fetcher"),
    ("partition_failed", r"^Partition \S+ marked as failed"),
    ("reassignment", r"^Handling reassignment of partition|^Successfully updated assignment of partition|"
                     r"^Target replicas \w+\(|^Alter(?:Partition|Isr) request from node|^Replayed partition assignment change"),
    ("election_started", r"^Starting (?:preferred )?replica leader election"),
    ("log_dir_failed", r"^Directories \[.*\] in broker \d+ marked offline"),
]
TRUNCATED_LIST = r"(?:,|\[|\[[\d,]*|\b(?:from|to|ISR))$"
