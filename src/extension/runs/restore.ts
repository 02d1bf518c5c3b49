// Which run a restored panel may follow again. A panel restored after a reload can ask for a
// question of a run that is not followed yet (a run the user opened by hand); the host then
// follows that folder again. The request may come from the webview's own state (a `ready`
// message), and the webview is untrusted: it could name any path. So only the run of the host's
// own record of the panel (written to workspace state when the user opened the question) is
// followed again; any other run id is just "not in the open runs". Pure: no 'vscode'.

export function mayFollowAgain(runId: string, remembered: unknown): boolean {
  if (typeof remembered !== 'object' || remembered === null) return false;
  const key = (remembered as { key?: unknown }).key;
  return typeof key === 'object' && key !== null && (key as { runId?: unknown }).runId === runId;
}
