"""On-demand backups, point-in-time recovery, export to and import from S3 layouts.

One mechanism serves all of them: while a table needs it, every item change
appends a change-log entry in the item's own commit (`changelog`), and a
snapshot is a copy of the table's rows taken in short batches and then made
consistent by undoing, from the log, whatever changed after its instant
(`snapshots`). Backups, the point-in-time base, restores, exports and
imports are jobs the background duty runs in batches (`jobs`), so none of
them blocks writers and each resumes after a crash from its stored cursor.
"""
