import type { ColumnType } from 'kysely'

/** Column types shared by the table types of db/schema*.ts, as Kysely sees them. */

export type Timestamp = ColumnType<Date, Date, Date>
export type Json<T> = ColumnType<T, string, string>
/** A column the database fills in when an insert leaves it out. */
export type Defaulted<T> = ColumnType<T, T | undefined, T>
