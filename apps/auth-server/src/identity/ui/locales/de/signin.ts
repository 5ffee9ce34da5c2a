import type { Catalog } from '../en/index.js';

export const signin: Catalog['signin'] = {
  title: 'Anmelden',
  toContinueTo: 'um mit <strong>{{client}}</strong> fortzufahren',
  email: 'E-Mail',
  password: 'Passwort',
  submit: 'Anmelden',
  forgotPassword: 'Passwort vergessen?',
  createAccount: 'Konto erstellen',
  invalidCredentials: 'E-Mail-Adresse oder Passwort ist falsch.',
  tooManyAttempts:
    'Zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in {{seconds}} Sekunden erneut.',
  or: 'oder',
  withPasskey: 'Mit einem Passkey anmelden',
  unsupportedTitle: 'Nicht unterstützt',
  unsupportedStep: 'Dieser Anmeldeschritt wird nicht unterstützt.',
  notInProgress:
    'Diese Seite gehört zu keiner laufenden Anmeldung. Beginnen Sie erneut in der Anwendung.',
  otherAccount:
    'Diese Anmeldung gehört zu einem anderen Konto: Schließen Sie sie mit dem zweiten Faktor dieses Kontos ab oder beginnen Sie erneut in der Anwendung.',
  logout: {
    title: 'Abmelden',
    question: 'Möchten Sie sich abmelden?',
    yes: 'Ja, abmelden',
    no: 'Nein, angemeldet bleiben',
    doneTitle: 'Abgemeldet',
    done: 'Sie sind abgemeldet.',
  },
};
