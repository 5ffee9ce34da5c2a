#!/bin/sh
# Fresh random secrets for a deployment (README "Deploying"): every one is
# `openssl rand -base64 32` made URL-safe, so it can sit in a connection URL (KEY_ENCRYPTION_KEY
# is then exactly 32 bytes, base64url, as the auth server wants).
#   infra/scripts/generate-secrets.sh compose auth.example.org api.example.org you@example.org > infra/docker/.env
#   infra/scripts/generate-secrets.sh k8s [namespace] | kubectl create -f -   (default: kubectl's current one)
# Keep them out of git and back them up: losing KEY_ENCRYPTION_KEY loses the signing keys, and
# every issued token with them. Run once: a second run makes new, different secrets.
set -eu
secret() { openssl rand -base64 32 | tr '+/' '-_' | tr -d '=\n'; }
usage() {
  echo "usage: $0 compose <auth host> <api host> <ACME e-mail> > infra/docker/.env" >&2
  echo "       $0 k8s [namespace] | kubectl create -f -" >&2
  exit 64
}
POSTGRES_PASSWORD=$(secret)
REDIS_PASSWORD=$(secret)
case "${1:-}" in
compose)
  [ "$#" -eq 4 ] || usage
  cat <<ENV
AUTH_DOMAIN=$2
API_DOMAIN=$3
ACME_EMAIL=$4
POSTGRES_PASSWORD=$POSTGRES_PASSWORD
REDIS_PASSWORD=$REDIS_PASSWORD
MINIO_ROOT_PASSWORD=$(secret)
ADMIN_TOKEN=$(secret)
COOKIE_KEYS=$(secret)
KEY_ENCRYPTION_KEY=$(secret)
UPLOAD_SIGNING_KEY=$(secret)
ENV
  ;;
k8s)
  [ "$#" -le 2 ] || usage
  cat <<YAML
# The secrets of infra/k8s (envFrom portcullis-secrets); PostgreSQL and Redis are the
# manifests' own (portcullis-postgres, portcullis-redis): change the URLs for managed ones.
apiVersion: v1
kind: Secret
metadata:
  name: portcullis-secrets${2:+
  namespace: $2}
type: Opaque
stringData:
  ADMIN_TOKEN: '$(secret)'
  COOKIE_KEYS: '$(secret)'
  KEY_ENCRYPTION_KEY: '$(secret)'
  UPLOAD_SIGNING_KEY: '$(secret)'
  POSTGRES_PASSWORD: '$POSTGRES_PASSWORD'
  DATABASE_URL: 'postgres://portcullis:$POSTGRES_PASSWORD@portcullis-postgres:5432/portcullis'
  REDIS_PASSWORD: '$REDIS_PASSWORD'
  REDIS_URL: 'redis://:$REDIS_PASSWORD@portcullis-redis:6379'
YAML
  ;;
*) usage ;;
esac
