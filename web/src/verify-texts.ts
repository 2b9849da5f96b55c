/**
 * The verification page's texts (issue 27), in the signer page's languages (i18n.ts decides which one
 * is current). Kept apart from i18n.ts so that the signer page does not carry them.
 */
import { interpolate, language } from './i18n.js';

const en = {
  title: 'Check a signed PDF',
  intro: 'Anyone can check here who signed a PDF, when, and whether it changed since. No account is needed.',
  'drop.title': 'The PDF to check',
  'drop.zone': 'Drop a PDF here',
  'drop.or': 'or',
  'drop.choose': 'Choose a PDF…',
  'drop.private':
    'The file is checked on this server and forgotten right away: nothing of it is kept. Checking does not send it to anyone.',
  'drop.checking': 'Checking {name}…',
  'document.intro':
    'You came here from the code on document {id}. This page cannot show the document itself: choose the PDF you have, and it tells you whether it is intact and who signed it.',
  'document.same': 'This PDF is document {id}, the one the code names.',
  'document.other': 'This PDF is another document ({other}), not the one the code names ({id}).',
  'error.notPdf': 'This file is not a PDF. Choose a PDF file.',
  'error.tooLarge': 'This file is too large to be checked here.',
  'error.limit': 'Files of up to {mb} MB can be checked.',
  'error.tooMany': 'Too many checks from your network in a short time. Try again in {seconds} seconds.',
  'error.network': 'The server could not be reached. Check your connection and try again.',
  'error.unreadable': 'This PDF could not be read: {detail}',
  'error.busy': 'The service is busy. Try again in a moment.',
  'error.generic': 'The check did not work: {detail}',
  'file.checked': 'Checked: {name} ({size}), on {time}.',
  'verdict.valid': 'Valid: the signatures are intact',
  'verdict.validBody':
    'Every signature checks out, nothing added after any of them went beyond what is allowed after signing (validation data, later signatures, form filling, annotations over no signed content), and each signer’s certificate leads to an authority this service trusts.',
  'verdict.changed': 'Changed after signing',
  'verdict.changedBody':
    'The signatures are intact, but a later update changed what a signature covers. See below, for each signature, what changed after it.',
  'verdict.invalid': 'Not valid: a signature is broken',
  'verdict.invalidBody': 'At least one signature does not check out. See below what broke.',
  'verdict.unconfirmed': 'Intact, but the signer is not confirmed',
  'verdict.unconfirmedBody':
    'Nothing covered by the signatures changed, but this service could not confirm who signed: see below why.',
  'verdict.unsigned': 'This PDF is not signed',
  'verdict.unsignedBody': 'It carries no signature or timestamp, so there is nothing to check.',
  'signatures.title': 'Signatures',
  'signature.heading': 'Signature {n}: {who}',
  'signature.unknown': 'unknown signer',
  'signature.result': 'Result',
  'signature.ok': 'Valid',
  'signature.broken': 'Broken',
  'signature.unconfirmed': 'Not confirmed',
  'signature.who': 'Signed by',
  'signature.certificate': 'Certificate',
  'signature.certificateOf': '{name}, issued by {issuer}',
  'signature.when': 'Signed at',
  'signature.whenClaimed': '{time} (as the signer’s computer said)',
  'signature.timestamp': 'Timestamp',
  'signature.timestampAt': '{time}, vouched for by {tsa}',
  'signature.timestampNone': 'none: the time is only what the signer’s computer said',
  'signature.level': 'Level proven',
  'change.validation-data':
    'Update {revision}: validation data (certificates, revocation answers, a document timestamp) was added, as long-term validation does.',
  'change.signature':
    'Update {revision}: a later signature was added with its field and appearance (page {pages}).',
  'change.form-filling': 'Update {revision}: a form field was filled in (page {pages}).',
  'change.annotation': 'Update {revision}: an annotation was added on page {pages}, over no signed content.',
  'change.annotationCovers':
    'Update {revision}: an annotation was added on page {pages} over signed text or graphics: what a viewer shows there is not what was signed.',
  'change.other':
    'Update {revision}: the document itself was changed (page {pages}): content, resources or structure no signature allows to change.',
  'signature.after': 'Changes afterwards',
  'signature.afterNone': 'None: nothing was added after this signature.',
  'signature.problems': 'What is wrong',
  'signature.details': 'Technical details',
  'level.none': 'No PAdES level could be established.',
  'level.B-B':
    'B-B (basic): proves who signed and that the signed content is unchanged; the signing time is only what the signer’s computer said.',
  'level.B-T':
    'B-T (with a timestamp): a timestamp authority also vouches that the signature existed at that time.',
  'level.B-LT':
    'B-LT (long-term): the file also carries the certificates and revocation data needed to check the signature years from now.',
  'level.B-LTA':
    'B-LTA (long-term with archive timestamp): the validation data is itself timestamped, so the proof can be renewed over the years.',
  'broke.format': 'The signature data cannot be read.',
  'broke.range': 'The signature does not state correctly which parts of the file it covers.',
  'broke.digest':
    'The content this signature covers was changed after signing: its fingerprint no longer matches.',
  'broke.signature': 'The signature does not match the signer’s certificate.',
  'broke.revoked': 'The signer’s certificate was revoked.',
  'broke.untrusted':
    'The signer’s certificate does not lead to an authority this service trusts, so who signed cannot be confirmed.',
  'broke.expired': 'The signer’s certificate had expired, and nothing proves the signature was made before.',
  'broke.noCertificate': 'The signer’s certificate is missing from the signature.',
  'broke.timestamp': 'The timestamp does not check out.',
  'timestamps.title': 'Document timestamps',
  'timestamps.intro':
    'A document timestamp seals the whole file as it was at that time, including earlier signatures.',
  'timestamps.item': '{time}, by {tsa}: {result}',
  'audit.title': 'Audit trail in the file',
  'audit.absent': 'This file carries no audit trail.',
  'audit.intact': 'The audit trail embedded in the file is intact.',
  'audit.broken': 'The audit trail embedded in the file does not check out:',
  'audit.coveredBy': 'It is covered by {signature}.',
  'audit.document': 'Document: {title} ({id})',
  'audit.events': 'What happened',
  'audit.event': '{time}: {activity}, by {actor}',
  'audit.revisions': 'Versions of the document',
  'audit.revision': 'Version {revision}: {reason}',
  'audit.inFile': 'contained in this file',
  'audit.notInFile': 'not contained in this file',
  'downloads.title': 'Reports',
  'downloads.json': 'Download the report (JSON)',
  'downloads.etsi': 'Download the ETSI validation report (XML)',
  'yes.valid': 'valid',
  'yes.invalid': 'not valid',
  'tsa.unknown': 'an unnamed timestamp authority',
};

export type VerifyKey = keyof typeof en;
type Texts = Record<VerifyKey, string>;

const de: Texts = {
  title: 'Ein signiertes PDF prüfen',
  intro:
    'Hier kann jeder prüfen, wer ein PDF signiert hat, wann, und ob es seitdem geändert wurde. Ein Konto ist nicht nötig.',
  'drop.title': 'Das zu prüfende PDF',
  'drop.zone': 'PDF hier ablegen',
  'drop.or': 'oder',
  'drop.choose': 'PDF auswählen…',
  'drop.private':
    'Die Datei wird auf diesem Server geprüft und sofort vergessen: Nichts davon wird gespeichert. Sie wird an niemanden weitergegeben.',
  'drop.checking': '{name} wird geprüft…',
  'document.intro':
    'Sie kommen über den Code auf Dokument {id}. Diese Seite kann das Dokument selbst nicht zeigen: Wählen Sie das PDF, das Sie haben, und sie sagt Ihnen, ob es unverändert ist und wer es signiert hat.',
  'document.same': 'Dieses PDF ist Dokument {id}, das der Code nennt.',
  'document.other': 'Dieses PDF ist ein anderes Dokument ({other}), nicht das vom Code genannte ({id}).',
  'error.notPdf': 'Diese Datei ist kein PDF. Wählen Sie eine PDF-Datei.',
  'error.tooLarge': 'Diese Datei ist zu groß, um hier geprüft zu werden.',
  'error.limit': 'Dateien bis {mb} MB können geprüft werden.',
  'error.tooMany':
    'Zu viele Prüfungen aus Ihrem Netz in kurzer Zeit. Versuchen Sie es in {seconds} Sekunden erneut.',
  'error.network': 'Der Server ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  'error.unreadable': 'Dieses PDF kann nicht gelesen werden: {detail}',
  'error.busy': 'Der Dienst ist ausgelastet. Versuchen Sie es gleich noch einmal.',
  'error.generic': 'Die Prüfung hat nicht geklappt: {detail}',
  'file.checked': 'Geprüft: {name} ({size}), am {time}.',
  'verdict.valid': 'Gültig: Die Signaturen sind unversehrt',
  'verdict.validBody':
    'Jede Signatur ist in Ordnung, nach keiner wurde mehr geändert, als nach dem Signieren erlaubt ist (Validierungsdaten, weitere Signaturen, Formulareingaben, Anmerkungen ohne signierten Inhalt zu verdecken), und jedes Zertifikat führt zu einer Stelle, der dieser Dienst vertraut.',
  'verdict.changed': 'Nach dem Signieren geändert',
  'verdict.changedBody':
    'Die Signaturen sind unversehrt, aber eine spätere Aktualisierung hat geändert, was eine Signatur abdeckt. Unten steht für jede Signatur, was danach geändert wurde.',
  'verdict.invalid': 'Ungültig: Eine Signatur ist gebrochen',
  'verdict.invalidBody': 'Mindestens eine Signatur ist nicht in Ordnung. Unten steht, was nicht stimmt.',
  'verdict.unconfirmed': 'Unversehrt, aber der Unterzeichner ist nicht bestätigt',
  'verdict.unconfirmedBody':
    'Nichts Signiertes wurde geändert, aber dieser Dienst konnte nicht bestätigen, wer signiert hat: Unten steht, warum.',
  'verdict.unsigned': 'Dieses PDF ist nicht signiert',
  'verdict.unsignedBody': 'Es enthält weder Signatur noch Zeitstempel; es gibt nichts zu prüfen.',
  'signatures.title': 'Signaturen',
  'signature.heading': 'Signatur {n}: {who}',
  'signature.unknown': 'unbekannter Unterzeichner',
  'signature.result': 'Ergebnis',
  'signature.ok': 'Gültig',
  'signature.broken': 'Gebrochen',
  'signature.unconfirmed': 'Nicht bestätigt',
  'signature.who': 'Signiert von',
  'signature.certificate': 'Zertifikat',
  'signature.certificateOf': '{name}, ausgestellt von {issuer}',
  'signature.when': 'Signiert am',
  'signature.whenClaimed': '{time} (laut dem Computer des Unterzeichners)',
  'signature.timestamp': 'Zeitstempel',
  'signature.timestampAt': '{time}, bestätigt von {tsa}',
  'signature.timestampNone': 'keiner: Die Zeit ist nur die Angabe des Computers des Unterzeichners',
  'signature.level': 'Nachgewiesene Stufe',
  'change.validation-data':
    'Aktualisierung {revision}: Validierungsdaten (Zertifikate, Sperrauskünfte, ein Dokumentzeitstempel) wurden ergänzt, wie es die Langzeitvalidierung tut.',
  'change.signature':
    'Aktualisierung {revision}: Eine weitere Signatur mit ihrem Feld und ihrer Darstellung wurde hinzugefügt (Seite {pages}).',
  'change.form-filling': 'Aktualisierung {revision}: Ein Formularfeld wurde ausgefüllt (Seite {pages}).',
  'change.annotation':
    'Aktualisierung {revision}: Auf Seite {pages} wurde eine Anmerkung hinzugefügt, die keinen signierten Inhalt verdeckt.',
  'change.annotationCovers':
    'Aktualisierung {revision}: Auf Seite {pages} wurde eine Anmerkung über signierten Text oder Grafiken gelegt: Was ein Betrachter dort zeigt, ist nicht das Signierte.',
  'change.other':
    'Aktualisierung {revision}: Das Dokument selbst wurde geändert (Seite {pages}): Inhalt, Ressourcen oder Aufbau, deren Änderung keine Signatur erlaubt.',
  'signature.after': 'Spätere Änderungen',
  'signature.afterNone': 'Keine: Nach dieser Signatur wurde nichts hinzugefügt.',
  'signature.problems': 'Was nicht stimmt',
  'signature.details': 'Technische Einzelheiten',
  'level.none': 'Keine PAdES-Stufe konnte festgestellt werden.',
  'level.B-B':
    'B-B (Basis): belegt, wer signiert hat und dass der signierte Inhalt unverändert ist; die Zeit ist nur die Angabe des Computers des Unterzeichners.',
  'level.B-T':
    'B-T (mit Zeitstempel): Ein Zeitstempeldienst bestätigt zusätzlich, dass die Signatur zu dieser Zeit bestand.',
  'level.B-LT':
    'B-LT (langfristig): Die Datei enthält auch die Zertifikate und Sperrinformationen, um die Signatur in Jahren noch zu prüfen.',
  'level.B-LTA':
    'B-LTA (langfristig mit Archivzeitstempel): Die Prüfdaten sind selbst mit einem Zeitstempel versehen, sodass der Nachweis über Jahre erneuert werden kann.',
  'broke.format': 'Die Signaturdaten können nicht gelesen werden.',
  'broke.range': 'Die Signatur gibt nicht korrekt an, welche Teile der Datei sie abdeckt.',
  'broke.digest':
    'Der signierte Inhalt wurde nach dem Signieren geändert: Sein Fingerabdruck stimmt nicht mehr.',
  'broke.signature': 'Die Signatur passt nicht zum Zertifikat des Unterzeichners.',
  'broke.revoked': 'Das Zertifikat des Unterzeichners wurde widerrufen.',
  'broke.untrusted':
    'Das Zertifikat des Unterzeichners führt zu keiner Stelle, der dieser Dienst vertraut; wer signiert hat, ist daher nicht bestätigt.',
  'broke.expired':
    'Das Zertifikat des Unterzeichners war abgelaufen, und nichts belegt, dass die Signatur vorher entstand.',
  'broke.noCertificate': 'Das Zertifikat des Unterzeichners fehlt in der Signatur.',
  'broke.timestamp': 'Der Zeitstempel ist nicht in Ordnung.',
  'timestamps.title': 'Dokument-Zeitstempel',
  'timestamps.intro':
    'Ein Dokument-Zeitstempel versiegelt die ganze Datei, wie sie zu diesem Zeitpunkt war, samt früheren Signaturen.',
  'timestamps.item': '{time}, von {tsa}: {result}',
  'audit.title': 'Protokoll in der Datei',
  'audit.absent': 'Diese Datei enthält kein Protokoll.',
  'audit.intact': 'Das in der Datei enthaltene Protokoll ist unversehrt.',
  'audit.broken': 'Das in der Datei enthaltene Protokoll ist nicht in Ordnung:',
  'audit.coveredBy': 'Es ist durch {signature} abgedeckt.',
  'audit.document': 'Dokument: {title} ({id})',
  'audit.events': 'Was geschah',
  'audit.event': '{time}: {activity}, durch {actor}',
  'audit.revisions': 'Fassungen des Dokuments',
  'audit.revision': 'Fassung {revision}: {reason}',
  'audit.inFile': 'in dieser Datei enthalten',
  'audit.notInFile': 'nicht in dieser Datei enthalten',
  'downloads.title': 'Berichte',
  'downloads.json': 'Bericht herunterladen (JSON)',
  'downloads.etsi': 'ETSI-Prüfbericht herunterladen (XML)',
  'yes.valid': 'gültig',
  'yes.invalid': 'ungültig',
  'tsa.unknown': 'einen unbenannten Zeitstempeldienst',
};

const fr: Texts = {
  title: 'Vérifier un PDF signé',
  intro:
    'Chacun peut vérifier ici qui a signé un PDF, quand, et s’il a changé depuis. Aucun compte n’est nécessaire.',
  'drop.title': 'Le PDF à vérifier',
  'drop.zone': 'Déposez un PDF ici',
  'drop.or': 'ou',
  'drop.choose': 'Choisir un PDF…',
  'drop.private':
    'Le fichier est vérifié sur ce serveur puis oublié aussitôt : rien n’en est conservé. Il n’est transmis à personne.',
  'drop.checking': 'Vérification de {name}…',
  'document.intro':
    'Vous venez du code figurant sur le document {id}. Cette page ne peut pas afficher le document lui-même : choisissez le PDF que vous avez, elle vous dira s’il est intact et qui l’a signé.',
  'document.same': 'Ce PDF est le document {id}, celui que nomme le code.',
  'document.other': 'Ce PDF est un autre document ({other}), pas celui que nomme le code ({id}).',
  'error.notPdf': 'Ce fichier n’est pas un PDF. Choisissez un fichier PDF.',
  'error.tooLarge': 'Ce fichier est trop volumineux pour être vérifié ici.',
  'error.limit': 'Les fichiers jusqu’à {mb} Mo peuvent être vérifiés.',
  'error.tooMany':
    'Trop de vérifications depuis votre réseau en peu de temps. Réessayez dans {seconds} secondes.',
  'error.network': 'Le serveur est injoignable. Vérifiez votre connexion et réessayez.',
  'error.unreadable': 'Ce PDF ne peut pas être lu : {detail}',
  'error.busy': 'Le service est occupé. Réessayez dans un instant.',
  'error.generic': 'La vérification n’a pas fonctionné : {detail}',
  'file.checked': 'Vérifié : {name} ({size}), le {time}.',
  'verdict.valid': 'Valide : les signatures sont intactes',
  'verdict.validBody':
    'Chaque signature est correcte, rien de ce qui a été ajouté après elles ne dépasse ce qui est permis après une signature (données de validation, signatures ultérieures, remplissage de formulaire, annotations ne couvrant aucun contenu signé), et chaque certificat mène à une autorité à laquelle ce service fait confiance.',
  'verdict.changed': 'Modifié après la signature',
  'verdict.changedBody':
    'Les signatures sont intactes, mais une mise à jour ultérieure a modifié ce qu’une signature couvre. Voir ci-dessous, pour chaque signature, ce qui a changé après elle.',
  'verdict.invalid': 'Non valide : une signature est rompue',
  'verdict.invalidBody': 'Au moins une signature n’est pas correcte. Voyez ci-dessous ce qui ne va pas.',
  'verdict.unconfirmed': 'Intact, mais le signataire n’est pas confirmé',
  'verdict.unconfirmedBody':
    'Rien de ce que couvrent les signatures n’a changé, mais ce service n’a pas pu confirmer qui a signé : voyez pourquoi ci-dessous.',
  'verdict.unsigned': 'Ce PDF n’est pas signé',
  'verdict.unsignedBody': 'Il ne porte ni signature ni horodatage : il n’y a rien à vérifier.',
  'signatures.title': 'Signatures',
  'signature.heading': 'Signature {n} : {who}',
  'signature.unknown': 'signataire inconnu',
  'signature.result': 'Résultat',
  'signature.ok': 'Valide',
  'signature.broken': 'Rompue',
  'signature.unconfirmed': 'Non confirmée',
  'signature.who': 'Signé par',
  'signature.certificate': 'Certificat',
  'signature.certificateOf': '{name}, délivré par {issuer}',
  'signature.when': 'Signé le',
  'signature.whenClaimed': '{time} (selon l’ordinateur du signataire)',
  'signature.timestamp': 'Horodatage',
  'signature.timestampAt': '{time}, attesté par {tsa}',
  'signature.timestampNone': 'aucun : l’heure est seulement celle de l’ordinateur du signataire',
  'signature.level': 'Niveau prouvé',
  'change.validation-data':
    'Mise à jour {revision} : des données de validation (certificats, réponses de révocation, un horodatage de document) ont été ajoutées, comme le fait la validation à long terme.',
  'change.signature':
    'Mise à jour {revision} : une signature ultérieure a été ajoutée avec son champ et son apparence (page {pages}).',
  'change.form-filling': 'Mise à jour {revision} : un champ de formulaire a été rempli (page {pages}).',
  'change.annotation':
    'Mise à jour {revision} : une annotation a été ajoutée en page {pages}, sans couvrir de contenu signé.',
  'change.annotationCovers':
    'Mise à jour {revision} : une annotation a été placée en page {pages} sur du texte ou des graphismes signés : ce qu’un lecteur y affiche n’est pas ce qui a été signé.',
  'change.other':
    'Mise à jour {revision} : le document lui-même a été modifié (page {pages}) : contenu, ressources ou structure qu’aucune signature ne permet de changer.',
  'signature.after': 'Modifications ultérieures',
  'signature.afterNone': 'Aucune : rien n’a été ajouté après cette signature.',
  'signature.problems': 'Ce qui ne va pas',
  'signature.details': 'Détails techniques',
  'level.none': 'Aucun niveau PAdES n’a pu être établi.',
  'level.B-B':
    'B-B (de base) : prouve qui a signé et que le contenu signé est inchangé ; l’heure est seulement celle de l’ordinateur du signataire.',
  'level.B-T':
    'B-T (horodaté) : une autorité d’horodatage atteste en plus que la signature existait à ce moment.',
  'level.B-LT':
    'B-LT (long terme) : le fichier contient aussi les certificats et les informations de révocation pour vérifier la signature dans des années.',
  'level.B-LTA':
    'B-LTA (long terme avec horodatage d’archive) : les données de validation sont elles-mêmes horodatées, la preuve peut donc être renouvelée au fil des ans.',
  'broke.format': 'Les données de la signature sont illisibles.',
  'broke.range': 'La signature n’indique pas correctement quelles parties du fichier elle couvre.',
  'broke.digest':
    'Le contenu couvert par cette signature a été modifié après la signature : son empreinte ne correspond plus.',
  'broke.signature': 'La signature ne correspond pas au certificat du signataire.',
  'broke.revoked': 'Le certificat du signataire a été révoqué.',
  'broke.untrusted':
    'Le certificat du signataire ne mène à aucune autorité à laquelle ce service fait confiance : qui a signé n’est donc pas confirmé.',
  'broke.expired':
    'Le certificat du signataire avait expiré, et rien ne prouve que la signature a été faite avant.',
  'broke.noCertificate': 'Le certificat du signataire manque dans la signature.',
  'broke.timestamp': 'L’horodatage n’est pas correct.',
  'timestamps.title': 'Horodatages du document',
  'timestamps.intro':
    'Un horodatage de document scelle tout le fichier tel qu’il était à ce moment, signatures précédentes comprises.',
  'timestamps.item': '{time}, par {tsa} : {result}',
  'audit.title': 'Journal contenu dans le fichier',
  'audit.absent': 'Ce fichier ne contient pas de journal.',
  'audit.intact': 'Le journal contenu dans le fichier est intact.',
  'audit.broken': 'Le journal contenu dans le fichier n’est pas correct :',
  'audit.coveredBy': 'Il est couvert par {signature}.',
  'audit.document': 'Document : {title} ({id})',
  'audit.events': 'Ce qui s’est passé',
  'audit.event': '{time} : {activity}, par {actor}',
  'audit.revisions': 'Versions du document',
  'audit.revision': 'Version {revision} : {reason}',
  'audit.inFile': 'contenue dans ce fichier',
  'audit.notInFile': 'absente de ce fichier',
  'downloads.title': 'Rapports',
  'downloads.json': 'Télécharger le rapport (JSON)',
  'downloads.etsi': 'Télécharger le rapport de validation ETSI (XML)',
  'yes.valid': 'valide',
  'yes.invalid': 'non valide',
  'tsa.unknown': 'une autorité d’horodatage sans nom',
};

const TEXTS: Record<string, Texts> = { en, de, fr };

/** The text in the page's current language, with `{name}` replaced from `values`. */
export function vt(key: VerifyKey, values: Record<string, string | number> = {}): string {
  return interpolate((TEXTS[language()] ?? en)[key], values);
}
