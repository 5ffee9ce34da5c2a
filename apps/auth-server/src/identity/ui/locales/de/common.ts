import type { Catalog } from '../en/index.js';

export const common: Catalog['common'] = {
  cancel: 'Abbrechen',
  continue: 'Weiter',
  done: 'Fertig',
  goBack: 'Zurück',
  formExpired: 'Das Formular ist abgelaufen. Gehen Sie zurück und versuchen Sie es erneut.',
  requestRefused: 'Anfrage abgelehnt',
  anApplication: 'eine Anwendung',
  signInProblem: 'Problem bei der Anmeldung',
  unavailable:
    'Die Anmeldung ist vorübergehend nicht verfügbar. Versuchen Sie es in ein paar Sekunden erneut.',
  somethingWrong: 'Etwas ist schiefgelaufen.',
  interactionExpired:
    'Diese Anmeldeanfrage ist abgelaufen oder hier nicht gültig. Beginnen Sie erneut in der Anwendung.',
  signInError: 'Fehler bei der Anmeldung',
};
