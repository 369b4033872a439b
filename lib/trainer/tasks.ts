// The task of a config: the kind its recipe and `task` name (taskOf), bound to its data and the policy's tokenizer.
import type { Tokenizer } from '../policy/tokenizer.js';
import type { TrainerConfig } from './config.js';
import { recipeOf, taskOf } from './recipes.js';
import { ccrTask, mathData } from './task-ccr.js';
import { qaData, qaTask } from './task-qa.js';
import { loadMoviesData, loadRecommendFiles, recommendTask, type MoviesData } from './task-recommend.js';
import type { Task } from './task.js';

const moviesCache = new Map<string, MoviesData>();

/** movies-multi data of a folder, loaded once per process. */
export function moviesData(dir: string): MoviesData {
  let data = moviesCache.get(dir);
  if (!data) moviesCache.set(dir, (data = loadMoviesData(dir)));
  return data;
}

/** The task that `config.recipe` trains on `config.task`. */
export function createTask(config: TrainerConfig, tokenizer: Tokenizer): Task {
  const recipe = recipeOf(config.recipe);
  const kind = taskOf(config);
  if (kind === 'recommend') {
    const data = config.data.recommend === '' ? moviesData(config.data.moviesDir) : loadRecommendFiles(config.data);
    return recommendTask(config, recipe, data, tokenizer) as Task;
  }
  if (kind === 'qa') return qaTask(config, recipe, qaData(config.data), tokenizer) as Task;
  return ccrTask(config, mathData(config.data), tokenizer) as Task;
}
