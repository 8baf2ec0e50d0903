/**
 * What coil read but could not use in the user's model files (Pi's models.json, Pi's settings.json): the
 * notes of this process, so `coil models`, `coil doctor` and a `--model` naming a skipped provider can say
 * why, instead of the note being an info line nobody sees. Both provider plugins read the same files, so
 * each note is kept once.
 */
const notes = new Map<string, string | undefined>();

/** Keep a note (about `provider`, when it is one whole provider that was not read). Returns whether it is new. */
export function noteSkipped(message: string, provider?: string): boolean {
  if (notes.has(message)) return false;
  notes.set(message, provider);
  return true;
}

/** Every note so far, in the order they were made. */
export function skippedNotes(): string[] {
  return [...notes.keys()];
}

/** The note about a provider id that was not read, if one was. */
export function skippedProvider(id: string): string | undefined {
  for (const [message, provider] of notes) if (provider === id) return message;
  return undefined;
}
