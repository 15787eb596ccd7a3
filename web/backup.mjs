// `window.panelot.backup`: backing up everything into one file, and restoring one.
// The file crosses the boundary as a Blob (never as one string); progress reports and
// results as JSON. All the work is Python's (panelot.backup); this only adapts calls.

/**
 * The backup API over the runtime module `rt` (a function returning it once booted).
 *
 * @param {() => object} runtime The `panelot.runtime` module (after boot).
 * @param {() => Promise<void>} ready Resolves once the store is open.
 */
export function backupApi(runtime, ready) {
  const reporter = (onProgress) =>
    onProgress ? (text) => onProgress(JSON.parse(text)) : undefined;
  return {
    /**
     * Back up everything (every table, attachments' bytes, the settings without any
     * credential value). Resolves `{file: Blob, size, tables, exportedAt}`; rejects with
     * the error `{name, message, field?}`.
     */
    async export({ settings = true, onProgress } = {}) {
      await ready();
      const [file, text] = await runtime().export_backup(settings, reporter(onProgress));
      const envelope = JSON.parse(text);
      if (!envelope.ok) throw envelope.error;
      return { file, ...envelope.result };
    },
    /**
     * What a backup file holds, from its header: `{databaseName, databaseVersion,
     * tables: {name: rows}, exportedAt, settings, size}`. Rejects for a file that is not
     * a backup.
     */
    async peek(file) {
      await ready();
      const envelope = JSON.parse(await runtime().peek_backup(file));
      if (!envelope.ok) throw envelope.error;
      return envelope.result;
    },
    /**
     * Replace everything with the backup in `file` (a Blob or File): the whole file is
     * read and checked first, then every table is replaced in one transaction. Resolves
     * `{status: "completed", response, settingsApplied, missingCredentials}` or
     * `{status: "failed", error}`; a repeated `submissionId` is answered from its receipt.
     */
    async restore(file, { clientId, submissionId, settings = true, onProgress } = {}) {
      await ready();
      const options = JSON.stringify({ clientId, submissionId, settings });
      return JSON.parse(await runtime().restore_backup(options, file, reporter(onProgress)));
    },
  };
}
