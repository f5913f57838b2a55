import type { GraphNode } from '../../../connectors/graph/contract.ts';
import { MARK_PHRASES, WARNING_SIGN } from '../model.ts';

/**
 * Company Brain's wire text. Two registers (the contract's "machine contract"): the verbatim
 * answers and tokens below are English and never change; headings and sentences are display
 * text in the organisation's language (English and German today; any other language gets
 * English). docs/company-brain.md lists every verbatim text.
 */

/** The contract's empty state, verbatim. */
export const EMPTY_BRAIN = 'The brain does not have enough content yet to build the knowledge graph. Try again once the organization has added more.';
/** read_concept's two refusals, verbatim and distinct. */
export const UNKNOWN_NODE = 'Unknown node: no node has this id.';
export const ABOVE_TIER = 'Access denied: this node is above your access tier.';
/** Empty answers of query_index and list_gaps, verbatim. */
export const NO_MATCHES = 'No visible node matches the query.';
export const NO_GAPS = 'No gaps in the visible graph.';
/** A projection that did not answer (backend_unavailable): the search index (query_index) or the knowledge graph. */
export const BRAIN_UNAVAILABLE = {
  search: 'The brain is unavailable just now: its search index did not answer. Try again shortly.',
  graph: 'The brain is unavailable just now: its knowledge graph did not answer. Try again shortly.',
} as const;

export type DisplayLanguage = 'en' | 'de';

/** The display language of an organisation's language tag (`de-AT` → de). */
export const displayLanguage = (tag: string): DisplayLanguage => (tag.toLowerCase().split('-')[0] === 'de' ? 'de' : 'en');

interface Display {
  readonly summary: string;
  readonly metadata: string;
  readonly tags: string;
  readonly freshness: string;
  readonly relations: string;
  readonly noRelations: string;
  readonly hiddenRelations: (n: number) => string;
  readonly hiddenMatches: (n: number) => string;
  readonly hiddenNodes: (n: number) => string;
  readonly matches: (query: string) => string;
  readonly more: (n: number) => string;
  readonly inboxRegistered: string;
  readonly draftProposed: string;
  readonly draftExists: (status: 'pending' | 'accepted' | 'rejected') => string;
  readonly onboardingNext: (step: string) => string;
  readonly onboardingComplete: string;
  readonly gap: {
    readonly clarificationNode: string;
    readonly clarificationRelation: string;
    readonly thinLink: string;
    readonly sparse: (n: number) => string;
    readonly stale: string;
  };
  readonly pack: {
    readonly title: string;
    readonly note: string;
    readonly overview: string;
    readonly departments: string;
    readonly processes: string;
    readonly systems: string;
    readonly agents: string;
    readonly dataSources: string;
    readonly gaps: string;
    readonly ownedBy: string;
    readonly none: string;
    readonly noOwner: string;
  };
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

export const DISPLAY: Readonly<Record<DisplayLanguage, Display>> = {
  en: {
    summary: 'Summary',
    metadata: 'Metadata',
    tags: 'Tags',
    freshness: 'Freshness',
    relations: 'Relations',
    noRelations: 'No relations to nodes you can see.',
    hiddenRelations: (n) => `${n} more ${plural(n, 'relation leads', 'relations lead')} to nodes above your access tier.`,
    hiddenMatches: (n) => `${n} more ${plural(n, 'match is', 'matches are')} hidden behind a higher access tier.`,
    hiddenNodes: (n) => `${n} ${plural(n, 'node is', 'nodes are')} above your access tier and not shown.`,
    matches: (query) => `Nodes matching "${query}"`,
    more: (n) => `… and ${n} more`,
    inboxRegistered: "Registered in the organization's inbox. Nothing reaches the brain until a manager approves it.",
    draftProposed:
      "Proposed for a manager's approval. Nothing is sent: once approved, the draft is put in the approver's own mailbox for them to review, edit and send by hand.",
    draftExists: (status) =>
      ({
        pending: 'This email was proposed already and waits for a manager; nothing new was registered.',
        accepted: "This email was proposed already and approved: the draft is in the approver's mailbox. Nothing new was registered.",
        rejected: 'This email was proposed already and rejected. Nothing new was registered.',
      })[status],
    onboardingNext: (step) => `The next area to complete is ${step}; get_onboarding_action_catalog lists what can be proposed for it.`,
    onboardingComplete: 'Every onboarding step is complete.',
    gap: {
      clarificationNode: 'is an unresolved mapping that needs to be resolved.',
      clarificationRelation: 'needs to be clarified:',
      thinLink: 'is the only relation holding two parts of the graph together.',
      sparse: (n) => `is sparsely covered: ${n} ${plural(n, 'relation', 'relations')}.`,
      stale: 'has evidence past its review date:',
    },
    pack: {
      title: 'Operating map',
      note: 'A compiled map of what this token may see, not the source: read the cited nodes with read_concept before relying on them.',
      overview: 'Overview',
      departments: 'Departments and people',
      processes: 'Processes',
      systems: 'Systems and tools',
      agents: 'AI agents',
      dataSources: 'Data sources',
      gaps: 'Open gaps',
      ownedBy: 'owned by',
      none: 'None visible.',
      noOwner: 'no owner recorded',
    },
  },
  de: {
    summary: 'Zusammenfassung',
    metadata: 'Metadaten',
    tags: 'Schlagwörter',
    freshness: 'Aktualität',
    relations: 'Beziehungen',
    noRelations: 'Keine Beziehungen zu Knoten, die Sie sehen können.',
    hiddenRelations: (n) => `${n} weitere ${plural(n, 'Beziehung führt', 'Beziehungen führen')} zu Knoten oberhalb Ihrer Zugriffsstufe.`,
    hiddenMatches: (n) => `${n} weitere ${plural(n, 'Treffer ist', 'Treffer sind')} hinter einer höheren Zugriffsstufe verborgen.`,
    hiddenNodes: (n) => `${n} ${plural(n, 'Knoten liegt', 'Knoten liegen')} oberhalb Ihrer Zugriffsstufe und ${plural(n, 'wird', 'werden')} nicht gezeigt.`,
    matches: (query) => `Knoten zu „${query}“`,
    more: (n) => `… und ${n} weitere`,
    inboxRegistered: 'Im Eingang der Organisation registriert. Nichts gelangt ins Gehirn, bevor eine Führungskraft zustimmt.',
    draftProposed:
      'Einer Führungskraft zur Freigabe vorgelegt. Nichts wird gesendet: Nach der Freigabe liegt der Entwurf im Postfach der freigebenden Person, die ihn prüft, bearbeitet und selbst sendet.',
    draftExists: (status) =>
      ({
        pending: 'Diese E-Mail wurde bereits vorgeschlagen und wartet auf eine Führungskraft; nichts Neues wurde registriert.',
        accepted:
          'Diese E-Mail wurde bereits vorgeschlagen und freigegeben: Der Entwurf liegt im Postfach der freigebenden Person. Nichts Neues wurde registriert.',
        rejected: 'Diese E-Mail wurde bereits vorgeschlagen und abgelehnt. Nichts Neues wurde registriert.',
      })[status],
    onboardingNext: (step) =>
      `Als Nächstes ist der Bereich ${step} zu vervollständigen; get_onboarding_action_catalog listet, was dafür vorgeschlagen werden kann.`,
    onboardingComplete: 'Alle Onboarding-Schritte sind abgeschlossen.',
    gap: {
      clarificationNode: 'ist eine ungeklärte Zuordnung, die geklärt werden muss.',
      clarificationRelation: 'muss geklärt werden:',
      thinLink: 'ist die einzige Beziehung, die zwei Teile des Graphen verbindet.',
      sparse: (n) => `ist dünn abgedeckt: ${n} ${plural(n, 'Beziehung', 'Beziehungen')}.`,
      stale: 'hat Belege über ihr Prüfdatum hinaus:',
    },
    pack: {
      title: 'Betriebslandkarte',
      note: 'Eine kompilierte Karte dessen, was dieses Token sehen darf, nicht die Quelle: Lesen Sie die zitierten Knoten mit read_concept, bevor Sie sich darauf stützen.',
      overview: 'Überblick',
      departments: 'Abteilungen und Personen',
      processes: 'Prozesse',
      systems: 'Systeme und Werkzeuge',
      agents: 'KI-Agenten',
      dataSources: 'Datenquellen',
      gaps: 'Offene Lücken',
      ownedBy: 'verantwortet von',
      none: 'Keine sichtbar.',
      noOwner: 'keine Verantwortung erfasst',
    },
  },
};

/** ` ⚠ <phrase>` for a marked node or relation; nothing for a verified one. */
export const markSuffix = (status: string): string => (status === 'inferred' || status === 'unresolved' ? ` ${WARNING_SIGN} ${MARK_PHRASES[status]}` : '');

/** A node as answers cite it: `[id] Title`. */
export const cite = (node: Pick<GraphNode, 'id' | 'properties'>): string => {
  const title = node.properties.title;
  return `[${node.id}] ${typeof title === 'string' ? title : node.id}`;
};

/** `[hidden:N] <sentence>`: the count is the contract's, the sentence display text. */
export const hiddenLine = (n: number, sentence: string): string => `[hidden:${n}] ${sentence}`;
