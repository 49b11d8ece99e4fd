#!/bin/sh
# Run once by the postgres image on an empty volume (/docker-entrypoint-initdb.d): the app's and
# the provider's roles, no superuser, each owning its own database (docs/decisions/0150).
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v app_password="$CHECKOUT_DB_PASSWORD" -v provider_password="$PROVIDER_DB_PASSWORD" <<'SQL'
CREATE ROLE checkout LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'app_password';
CREATE DATABASE checkout OWNER checkout;
REVOKE ALL ON DATABASE checkout FROM PUBLIC;
CREATE ROLE payment_provider LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'provider_password';
CREATE DATABASE payment_provider OWNER payment_provider;
REVOKE ALL ON DATABASE payment_provider FROM PUBLIC;
SQL
