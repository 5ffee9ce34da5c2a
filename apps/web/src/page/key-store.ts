/** The page's DPoP key pair in IndexedDB, kept non-extractable (apps/web/README.md#dpop). */
import { createDpopKey, type DpopKey, type DpopKeyPair } from '@portcullis/client';

const KEY_DB = 'portcullis-demo';
const KEY_STORE = 'keys';
const KEY_ID = 'dpop';

function keyStore<T>(
  mode: IDBTransactionMode,
  operation: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(KEY_DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(KEY_STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(KEY_STORE, mode);
      const request = operation(tx.objectStore(KEY_STORE));
      const done = (settle: () => void) => {
        db.close();
        settle();
      };
      tx.oncomplete = () => done(() => resolve(request.result));
      tx.onerror = () => done(() => reject(tx.error));
      tx.onabort = () => done(() => reject(tx.error));
    };
  });
}

const storedPair = () =>
  keyStore<DpopKeyPair | undefined>('readonly', (store) => store.get(KEY_ID));

/** The stored key, or a new one stored with `add`: two tabs starting at once keep one key. */
export async function loadDpopKey(): Promise<DpopKey> {
  const stored = await storedPair();
  if (stored) return createDpopKey({ keyPair: stored });
  const key = await createDpopKey();
  try {
    await keyStore('readwrite', (store) => store.add(key.keyPair, KEY_ID));
    return key;
  } catch {
    const winner = await storedPair();
    if (!winner) throw new Error('the DPoP key could not be stored');
    return createDpopKey({ keyPair: winner });
  }
}

/** Signing out ends the key too: the next sign-in binds its tokens to a new one. */
export async function forgetDpopKey(): Promise<void> {
  await keyStore('readwrite', (store) => store.delete(KEY_ID));
}
