import type { Catalog } from '../index.js';

export const consoleNs: Catalog['console'] = {
  name: '{{product}}-Konsole',
  signIn: 'An der Konsole anmelden',
  signOut: 'Abmelden',
  signedOut: 'Sie sind von der Konsole abgemeldet',
  nav: {
    status: 'Status',
    clients: 'Clients',
    users: 'Benutzer',
    roles: 'Rollen',
    keys: 'Signaturschlüssel',
    audit: 'Prüfprotokoll',
  },
  refused: {
    title: 'Zugang zur Konsole verweigert',
    expired:
      'Diese Anmeldung hat zu lange gedauert oder wurde anderswo begonnen. Melden Sie sich erneut an.',
    notSignedIn: 'Die Anmeldung wurde nicht abgeschlossen.',
    noSecondFactor: 'Die Konsole verlangt eine Anmeldung mit zweitem Faktor.',
    notAdmin: 'Nur Administratoren dürfen die Konsole verwenden.',
    adminApi: 'Die Admin-API hat nicht geantwortet. Versuchen Sie es gleich noch einmal.',
    signedOut: 'Ihre Konsolen-Sitzung ist beendet. Melden Sie sich erneut an.',
    forged:
      'Dieses Formular ist abgelaufen oder stammt nicht von der Konsole. Öffnen Sie die Seite erneut.',
  },
  stepUp: {
    title: 'Bestätigen Sie, dass Sie es sind',
    explain:
      'Diese Änderung verlangt eine Anmeldung aus den letzten {{minutes}} Minuten. Melden Sie sich mit Ihrem zweiten Faktor erneut an und wiederholen Sie sie.',
    again: 'Erneut anmelden',
  },
  done: {
    saved: 'Gespeichert.',
  },
};
