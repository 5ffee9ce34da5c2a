import type { Catalog } from '../index.js';

export const common: Catalog['common'] = {
  cancel: 'Abbrechen',
  continue: 'Weiter',
  formExpired: 'Das Formular ist abgelaufen. Gehen Sie zurück und versuchen Sie es erneut.',
  requestRefused: 'Anfrage abgelehnt',
};
