/**
 * Activity: limited, client-reported lifecycle evidence (docs/alignbase.md, "Activity").
 * Installations report their integration, transport and capability names; events name what
 * happened from fixed lists, each tied to a capability the installation reported. Nothing free
 * form is stored: no transcripts, reasoning, tool payloads or environment values, only names
 * and codes that match conservative patterns. Events are the client's claim, not proof that a
 * model read anything.
 *
 * The units: vocabulary.ts (the fixed lists and patterns), validate.ts (the inputs and the
 * checks that need no store), queries.ts (every statement, with typed rows), settings.ts (the
 * tenant's switch), installations.ts, events.ts, hook-session.ts (the tools) and admin.ts
 * (kgw activity). This module gathers what the dialects and the CLI use.
 */

export * from './vocabulary.ts';
export type { ActivityEventInput, HookEventInput, HookSessionInput, InstallationReport } from './validate.ts';
export { activityEnabled } from './settings.ts';
export { reportInstallation } from './installations.ts';
export { recordActivityEvent, recordHookEvent } from './events.ts';
export { startHookSession } from './hook-session.ts';
export type { ActivityListing, EventListing, InstallationListing } from './admin.ts';
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, eventDetail, listActivity, setActivityEnabled } from './admin.ts';
