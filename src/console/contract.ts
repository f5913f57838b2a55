import type { Readable } from 'node:stream';
import type { Caller, TenantRef } from '../kernel/access/caller.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { Services } from '../kernel/services.ts';
import type { SafeHtml } from '../http/pages/html.ts';
import type { Lang, Text } from './text.ts';

/**
 * What a product offers the console (src/console/routes.ts), declared in its index.ts beside
 * its tools: the console names no product, as the MCP layer names none. Everything a page shows
 * or does goes through the product's own core functions and deciders, as the person signed in,
 * so the console, the tools and `kgw` cannot disagree.
 */

/** The person a console request is for: signed in, in one tenant, deciding as themselves. */
export interface ConsolePerson {
  readonly services: Services;
  readonly tenant: TenantRef;
  readonly person: { readonly id: string; readonly name: string; readonly email: string };
  /** The person as the tools' caller, with every scope: their roles and tier decide, as an agent's are bounded by its owner's. */
  readonly caller: Caller;
  readonly lang: Lang;
  /** The console's audit trail, naming the person. */
  readonly audit: AuditTrail;
}

/** One kind of item an inbox source holds (a Knowledge draft, a brain proposal, an email draft …). */
export interface InboxKind {
  readonly id: string;
  readonly label: Text;
}

/** An open item as the inbox lists it. */
export interface InboxEntry {
  /** Its id within its source. */
  readonly id: string;
  /** One of the source's kinds. */
  readonly kind: string;
  readonly title: string;
  /** Who submitted it (a person, or an agent and its owner), as the source names them. */
  readonly from: string | null;
  readonly createdAt: Date;
  /** What it was written on has changed since (a draft on an older version, a proposal about a node changed since). */
  readonly stale: boolean;
}

/** How an item was decided. */
export interface InboxDecided {
  readonly outcome: 'accepted' | 'rejected';
  readonly by: string | null;
  readonly at: Date | null;
  readonly note: string | null;
  /** What accepting did: the version saved, the nodes changed, where an email draft was put. */
  readonly result: SafeHtml | undefined;
}

/** One item in full, for the person who may decide it. */
export interface InboxDetail {
  readonly entry: InboxEntry;
  /** Undefined while open. */
  readonly decided: InboxDecided | undefined;
  /** What it changes: a diff, a node's fields and tier now and after, the email as it will appear. */
  readonly changes: SafeHtml;
  /** Fields the accept form adds (publish, accept although stale, a mailbox password); names are the source's. */
  readonly acceptFields?: SafeHtml | undefined;
}

/**
 * A product's decisions for people: the items a person may decide, each shown and decided
 * through the product's own review functions. `list` and `show` give only what the person may
 * decide; an item they may not is unknown to them (show: undefined), as another tenant's is.
 * A refusal is thrown as the product's KgwError; an item someone decided meanwhile is a
 * conflict, after which the page shows that decision.
 */
export interface InboxSource {
  /** Its part of the item's address (/console/inbox/<source>/<id>). */
  readonly id: string;
  readonly kinds: readonly InboxKind[];
  list(who: ConsolePerson): Promise<InboxEntry[]>;
  show(who: ConsolePerson, id: string): Promise<InboxDetail | undefined>;
  /** `form`: the accept form's fields (acceptFields), as posted. Both decide only what `show` shows, and refuse anything else as not_found. */
  accept(who: ConsolePerson, id: string, form: URLSearchParams): Promise<void>;
  reject(who: ConsolePerson, id: string, note: string | undefined): Promise<void>;
}

/** A request to a section's page, as the shell read it. */
export interface SectionRequest {
  /** The path's parameters (`:name` in the route's path). */
  readonly params: Readonly<Record<string, string>>;
  /** The query string's fields, each once (the first of repeated ones). */
  readonly query: URLSearchParams;
  /** A POST's form, already checked: the session's CSRF value, this gateway's origin, UTF-8, no NUL. */
  readonly form: URLSearchParams | undefined;
  /** The session's CSRF value, for the hidden `csrf` field of every form the page holds. */
  readonly csrf: string;
}

/** What a section's page answers: a page in the frame, a redirect (after a POST), or a file to save. */
export type SectionAnswer =
  | {
      readonly page: {
        readonly title: string;
        readonly body: SafeHtml;
        readonly status?: number;
        /** Names of the section's own assets the page loads as scripts, after the console's (every page works without them). */
        readonly scripts?: readonly string[];
      };
    }
  | { readonly redirect: string }
  | {
      /** A file to save, or bytes a page's script fetches; a stream for a large one (a KB file's original bytes). */
      readonly download: { readonly name: string; readonly type: string; readonly body: string | Buffer | Readable };
    };

/**
 * One page of a section: GET shows, POST acts (the shell checks the form first). A refusal is
 * thrown as a KgwError and shown as a page with the status its code means; a thing the person
 * may not see is `not_found`, worded like an unknown one.
 */
export interface SectionRoute {
  readonly method: 'GET' | 'POST';
  /** Under /console/<section id>, e.g. '' or '/:kb/files'. */
  readonly path: string;
  handle(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer>;
}

/**
 * A file a section serves itself under /console/static/<section id>/<name>: its pages' script,
 * a drawing library from npm. Only the gateway's own origin may serve script (the CSP), so a
 * library is served from here, never from a CDN.
 */
export interface ConsoleAsset {
  readonly name: string;
  /** Its Content-Type. */
  readonly type: string;
  /** Its bytes, read once at the first request and kept. */
  read(): string | Buffer;
}

/** A part of the console beside the inbox: its navigation entry and pages. */
export interface ConsoleSection {
  /** Its address: /console/<id>. */
  readonly id: string;
  readonly label: Text;
  /** Whether the person sees the section at all (its entry in the navigation, its pages). */
  visibleTo(who: ConsolePerson): Promise<boolean>;
  readonly routes: readonly SectionRoute[];
  readonly assets?: readonly ConsoleAsset[];
  /** Only for the organisation's administrators: listed after everyone's sections, beside Admin. */
  readonly administrative?: boolean;
}

/** What a product adds to the console. */
export interface ConsoleOffer {
  readonly inbox?: InboxSource;
  readonly sections?: readonly ConsoleSection[];
}
